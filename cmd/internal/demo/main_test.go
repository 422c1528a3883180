package demo

import (
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

func TestMain(m *testing.M) {
	testkit.VerifyTestMain(m)
}
