package rueidisobserve

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/lockwatch/lockwatch/observe"
)

// WithObserver returns client with its Do and DoMulti observed by obs. Everything else,
// including Dedicated connections and Nodes, is the wrapped client's own and unobserved.
func WithObserver(client rueidis.Client, obs *observe.Observer) rueidis.Client {
	return observedClient{Client: client, hook: NewHook(obs)}
}

// ClientBuilder returns a builder for rueidislock.LockerOption.ClientBuilder (or any code
// that builds its client from a rueidis.ClientOption) whose clients obs observes.
func ClientBuilder(obs *observe.Observer) func(rueidis.ClientOption) (rueidis.Client, error) {
	return func(opt rueidis.ClientOption) (rueidis.Client, error) {
		client, err := rueidis.NewClient(opt)
		if err != nil {
			return nil, err
		}
		return WithObserver(client, obs), nil
	}
}

type observedClient struct {
	rueidis.Client
	hook Hook
}

func (c observedClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	return c.hook.Do(c.Client, ctx, cmd)
}

func (c observedClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	return c.hook.DoMulti(c.Client, ctx, multi...)
}
