package commandstats

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		info string
		want Stats
	}{
		{"Redis 7", "# Commandstats\r\ncmdstat_get:calls=3,usec=12,usec_per_call=4.00,rejected_calls=1,failed_calls=2\r\ncmdstat_config|set:calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n",
			Stats{"get": {Calls: 3, Usec: 12, RejectedCalls: 1, FailedCalls: 2}, "config|set": {Calls: 1, Usec: 5}}},
		{"before Redis 6.2", "# Commandstats\ncmdstat_swapdb:calls=2,usec=7,usec_per_call=3.50\n",
			Stats{"swapdb": {Calls: 2, Usec: 7}}},
		{"no commands", "# Commandstats\r\n", Stats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.info); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse = %+v, want %+v", got, tt.want)
			}
		})
	}
}
