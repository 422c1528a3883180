package lease

import "strings"

// argsEcho is where Redis starts quoting a command's arguments back in an error reply: "ERR
// unknown command 'evalsha', with args beginning with: 'sha' '1' 'job:42' '<token>' …". A
// server (or proxy) that renamed or does not offer EVALSHA answers every command so, and cuts
// the quotation at 128 bytes, possibly in the middle of the token.
const argsEcho = "with args beginning with:"

// withoutArgs returns err without the arguments an error reply quotes back: lease's commands
// carry the lock token (a capability) and FencedSet's value, which would otherwise reach the
// caller's error and the renewer's log lines. The quotation may end in a cut piece of the
// token, which no search for the whole token finds, so it is dropped altogether. Every other
// error (a timeout, a closed connection, a reply that quotes nothing) is returned as it is; a
// replaced one is still a Redis reply (redis.HasErrorPrefix and errors.As with redis.Error see
// it).
func withoutArgs(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	echo := strings.Index(msg, argsEcho)
	if echo < 0 {
		return err
	}
	return redactedError(msg[:echo+len(argsEcho)] + " (arguments withheld)")
}

// redactedError is a Redis error reply without its quoted arguments (withoutArgs).
type redactedError string

func (e redactedError) Error() string { return string(e) }

// RedisError marks it as a reply of the server, as go-redis's own error replies are.
func (e redactedError) RedisError() {}
