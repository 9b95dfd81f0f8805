package signing

import (
	"slices"
	"testing"
)

// TestAgentScope: a pairing code's scope is its creator's allow-list
// without repeats, and [] (every company) for an unrestricted creator,
// never nil (the API renders it as an array).
func TestAgentScope(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ids  []string
		want []string
	}{
		{"unrestricted", nil, []string{}},
		{"one", []string{"cmp_a"}, []string{"cmp_a"}},
		{"repeats dropped, order kept", []string{"cmp_b", "cmp_a", "cmp_b"}, []string{"cmp_b", "cmp_a"}},
	} {
		got := agentScope(tc.ids)
		if got == nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: agentScope(%v) = %#v, want %#v", tc.name, tc.ids, got, tc.want)
		}
	}
}

// TestScopeCovers: a credential acts on an agent only when its allow-list
// reaches every company the agent may act for.
func TestScopeCovers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		outer, inner []string
		want         bool
	}{
		{"unrestricted credential, unrestricted agent", nil, nil, true},
		{"unrestricted credential, restricted agent", nil, []string{"cmp_a"}, true},
		{"restricted credential, unrestricted agent", []string{"cmp_a"}, nil, false},
		{"restricted credential, agent within it", []string{"cmp_a", "cmp_b"}, []string{"cmp_b"}, true},
		{"restricted credential, agent beyond it", []string{"cmp_a"}, []string{"cmp_a", "cmp_b"}, false},
	} {
		if got := scopeCovers(tc.outer, tc.inner); got != tc.want {
			t.Errorf("%s: scopeCovers(%v, %v) = %v, want %v", tc.name, tc.outer, tc.inner, got, tc.want)
		}
	}
}
