package jobs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDurationUnmarshalJSON(t *testing.T) {
	cases := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{`"90s"`, 90 * time.Second, ""},
		{`"1h30m"`, 90 * time.Minute, ""},
		{`"6h"`, 6 * time.Hour, ""},
		{`"250ms"`, 250 * time.Millisecond, ""},
		{`"-5m"`, -5 * time.Minute, ""}, // refused later, by range checks
		{`"0s"`, 0, ""},
		{`90`, 0, `a duration must be a string like "30m", not 90`},
		{`1.5`, 0, `a duration must be a string like "30m", not 1.5`},
		{`true`, 0, `a duration must be a string like "30m", not true`},
		{`{}`, 0, `a duration must be a string like "30m"`},
		{`"90"`, 0, `"90" is not a duration (write it like 90s, 30m or 6h)`},
		{`"ten minutes"`, 0, `"ten minutes" is not a duration`},
		{`""`, 0, `"" is not a duration`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			d := Duration(time.Minute) // must be left alone on error
			err := json.Unmarshal([]byte(tc.in), &d)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Unmarshal(%s) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				if d != Duration(time.Minute) {
					t.Errorf("Unmarshal(%s) changed the value to %s despite the error", tc.in, d)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", tc.in, err)
			}
			if d.Std() != tc.want {
				t.Errorf("Unmarshal(%s) = %s, want %s", tc.in, d, tc.want)
			}
		})
	}
}

func TestDurationMarshal(t *testing.T) {
	type wrapper struct {
		T Duration  `json:"t"`
		P *Duration `json:"p,omitempty"`
	}
	p := Duration(6 * time.Hour)
	b, err := json.Marshal(wrapper{T: Duration(90 * time.Second), P: &p})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"t":"1m30s","p":"6h0m0s"}` {
		t.Errorf("Marshal = %s", b)
	}
	var back wrapper
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.T.Std() != 90*time.Second || back.P == nil || back.P.Std() != 6*time.Hour {
		t.Errorf("round trip = %+v", back)
	}
}

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("2h45m")); err != nil {
		t.Fatal(err)
	}
	if d.Std() != 2*time.Hour+45*time.Minute {
		t.Errorf("UnmarshalText = %s", d)
	}
	txt, err := d.MarshalText()
	if err != nil || string(txt) != "2h45m0s" {
		t.Errorf("MarshalText = %q, %v", txt, err)
	}
	if d.String() != (2*time.Hour + 45*time.Minute).String() {
		t.Errorf("String = %q", d.String())
	}
	if err := d.UnmarshalText([]byte("45")); err == nil || !strings.Contains(err.Error(), "write it like 90s, 30m or 6h") {
		t.Errorf("UnmarshalText(45) error = %v", err)
	}
}
