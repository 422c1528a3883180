package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// What keyspace notifications being on costs Redis on writes of keys that are no lock: with
// notify-keyspace-events set, every write builds its event's channel name and matches it
// against every subscribed pattern, whoever subscribed for what. Windows of the same write load
// with the setting off and on (Kg$hx), a subscriber to the notifications feed's two patterns
// attached in both (so only the setting differs), and idle windows for the writes' own cost; in
// rotated order, notifyRounds rounds.

const (
	notifyWindow = 10 * time.Second
	notifyRounds = 5
)

// The modes of the notifications-on measurement, as intervalRun modes.
const (
	notifyIdle = "other writes: idle"
	notifyOff  = "other writes: notifications off"
	notifyOn   = "other writes: notifications on"
)

// measureNotifyOn returns one intervalRun per setting, cpu being each window's Redis CPU.
func measureNotifyOn(ctx context.Context, admin *redis.Client, cfg indexCmpConfig, progress io.Writer) ([]intervalRun, error) {
	sub := admin.PSubscribe(ctx, notifyChannels...)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return nil, fmt.Errorf("PSUBSCRIBE: %w", err)
	}
	writes := &otherWrites{c: admin, rng: rand.New(rand.NewPCG(5, 39)), keys: cfg.otherKeys}
	runs := []intervalRun{{mode: notifyIdle}, {mode: notifyOff}, {mode: notifyOn}}
	for round := range notifyRounds {
		for i := range runs {
			r := &runs[(i+round)%len(runs)]
			cpu, err := notifyWindowCPU(ctx, admin, writes, r.mode, cfg.otherWrites)
			if err != nil {
				return nil, err
			}
			r.cpu = append(r.cpu, cpu)
			fmt.Fprintf(progress, "  %s, round %d: Redis CPU %v over %v\n", r.mode, round+1, cpu.Round(time.Millisecond), notifyWindow)
		}
	}
	return runs, setNotifications(ctx, admin, "")
}

func notifyWindowCPU(ctx context.Context, admin *redis.Client, writes *otherWrites, mode string, rate int) (time.Duration, error) {
	classes := ""
	if mode == notifyOn {
		classes = notifyClasses
	}
	if err := setNotifications(ctx, admin, classes); err != nil {
		return 0, err
	}
	if mode == notifyIdle {
		return idleCPU(ctx, admin, notifyWindow)
	}
	return spanCPU(ctx, admin, func() error { return paced(ctx, max(1, rate/otherWritesBatch), notifyWindow, writes.batch) })
}

// spanCPU is Redis's CPU while work runs.
func spanCPU(ctx context.Context, admin *redis.Client, work func() error) (time.Duration, error) {
	cpu0, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		return 0, err
	}
	if err := work(); err != nil {
		return 0, err
	}
	cpu1, err := testkit.RedisCPU(ctx, admin)
	return cpu1 - cpu0, err
}
