package lease

import (
	"crypto/rand"
	"encoding/base64"
)

// tokenBytes is the owner token's entropy: 128 bits cannot be guessed or collide.
const tokenBytes = 16

// newToken returns a fresh owner token, 22 URL-safe characters.
func newToken() string {
	var raw [tokenBytes]byte
	// crypto/rand.Read never returns an error on supported platforms; it crashes the program
	// irrecoverably instead.
	_, _ = rand.Read(raw[:])
	var text [22]byte // base64.RawURLEncoding.EncodedLen(tokenBytes)
	base64.RawURLEncoding.Encode(text[:], raw[:])
	return string(text[:])
}
