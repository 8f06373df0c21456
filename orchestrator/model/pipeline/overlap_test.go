package pipeline

import "testing"

func TestOnOverlap(t *testing.T) {
	tests := []struct {
		policy Overlap
		active bool
		want   Decision
	}{
		{OverlapForbid, false, Start},
		{OverlapForbid, true, Skip},
		{OverlapAllow, false, Start},
		{OverlapAllow, true, Start},
		{OverlapReplace, false, Start},
		{OverlapReplace, true, ReplacePrevious},
		{"", true, Skip},          // the default is forbid
		{"sometimes", true, Skip}, // validate-config refuses it; if it slips through, be safe
	}
	for _, tc := range tests {
		if got := OnOverlap(tc.policy, tc.active); got != tc.want {
			t.Errorf("OnOverlap(%q, %v) = %s, want %s", tc.policy, tc.active, got, tc.want)
		}
	}
}
