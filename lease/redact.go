package lease

import "strings"

// argsEcho is where Redis starts quoting a command's arguments back in an error reply: "ERR
// unknown command 'evalsha', with args beginning with: 'sha' '1' 'job:42' '<token>' …". A
// server (or proxy) that renamed or does not offer EVALSHA answers every renew and release so,
// and cuts the quotation at 128 bytes, possibly in the middle of the token.
const argsEcho = "with args beginning with:"

// redactToken returns err with the lease's token scrubbed from its message: an error reply
// that quotes the command's arguments back would otherwise carry the token, a capability, into
// the caller's error and the renewer's log lines. The common error (a timeout, a closed
// connection, a reply that quotes nothing) is returned as it is. Only an error whose message
// holds the token or a quotation of arguments is replaced; such an error is a Redis reply, so
// the replacement is one too (redis.HasErrorPrefix and errors.As with redis.Error still see it).
func redactToken(err error, token string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	echo := strings.Index(msg, argsEcho)
	if echo < 0 && (token == "" || !strings.Contains(msg, token)) {
		return err
	}
	if echo >= 0 {
		// The quotation may end in a cut piece of the token, which no search for the whole
		// token finds: drop the quoted arguments altogether.
		msg = msg[:echo+len(argsEcho)] + " (arguments withheld)"
	}
	if token != "" {
		msg = strings.ReplaceAll(msg, token, "<token>")
	}
	return redactedError(msg)
}

// redactedError is a Redis error reply with the lease's token scrubbed from it (redactToken).
type redactedError string

func (e redactedError) Error() string { return string(e) }

// RedisError marks it as a reply of the server, as go-redis's own error replies are.
func (e redactedError) RedisError() {}
