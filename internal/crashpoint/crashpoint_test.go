package crashpoint

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []Rule
		err  string
	}{
		{in: "", want: nil},
		{in: " ; ", want: nil},
		{in: "store.after_commit@hit=40", want: []Rule{{Name: StoreAfterCommit, Hit: 40}}},
		{in: "store.before_commit@hit=1;httpx.before_response@p=0.25,seed=7",
			want: []Rule{{Name: StoreBeforeCommit, Hit: 1}, {Name: HTTPBeforeResponse, P: 0.25, Seed: 7}}},
		{in: "store.commit@hit=1", err: "NAME@RULE"},
		{in: "store.after_commit", err: "NAME@RULE"},
		{in: "store.after_commit@hit=0", err: "at least 1"},
		{in: "store.after_commit@hit=x", err: "invalid syntax"},
		{in: "store.after_commit@p=1.5,seed=1", err: "(0, 1]"},
		{in: "store.after_commit@p=0.5", err: "needs hit=N, or p=F,seed=S"},
		{in: "store.after_commit@seed=3", err: "needs hit=N, or p=F,seed=S"},
		{in: "store.after_commit@hit=2,p=0.5,seed=1", err: "needs hit=N, or p=F,seed=S"},
		{in: "store.after_commit@after=2", err: "unknown key"},
		{in: "store.after_commit@hit=2;store.after_commit@hit=3", err: "armed twice"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}
