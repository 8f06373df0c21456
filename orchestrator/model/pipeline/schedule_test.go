package pipeline

import (
	"strings"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func mustParse(t *testing.T, spec, tz string) Schedule {
	t.Helper()
	s, err := Parse(spec, tz)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", spec, tz, err)
	}
	return s
}

// fires lists the next n fire times after from, in UTC RFC3339.
func fires(s Schedule, from time.Time, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		from = s.Next(from)
		out = append(out, from.UTC().Format(time.RFC3339))
	}
	return out
}

func TestNextAcrossDST(t *testing.T) {
	tests := []struct {
		name, spec, tz, from string
		want                 []string
		why                  string
	}{
		{
			name: "new york daily 02:30 spring forward", spec: "30 2 * * *", tz: "America/New_York", from: "2026-03-07T12:00:00Z",
			// 2026-03-08 02:30 EST does not exist; the run happens at the jump, 03:00 EDT.
			want: []string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"},
		},
		{
			name: "new york weekdays 02:30 spring forward on a sunday", spec: "30 2 * * 1-5", tz: "America/New_York", from: "2026-03-07T12:00:00Z",
			// The skipped hour is on a Sunday, when the spec does not fire anyway.
			want: []string{"2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"},
		},
		{
			name: "new york daily 01:30 fall back fires once", spec: "30 1 * * *", tz: "America/New_York", from: "2026-10-31T12:00:00Z",
			// 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST); only the first fires.
			want: []string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", "2026-11-03T06:30:00Z"},
		},
		{
			name: "new york daily 02:30 fall back is unambiguous", spec: "30 2 * * *", tz: "America/New_York", from: "2026-10-31T12:00:00Z",
			want: []string{"2026-11-01T07:30:00Z", "2026-11-02T07:30:00Z"},
		},
		{
			name: "new york hourly spring forward", spec: "0 * * * *", tz: "America/New_York", from: "2026-03-08T05:00:00Z",
			// 01:00 EST, then 03:00 EDT one real hour later: 02:00 does not exist.
			want: []string{"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"},
		},
		{
			name: "new york hourly fall back keeps real-time rhythm", spec: "0 * * * *", tz: "America/New_York", from: "2026-11-01T04:00:00Z",
			// 01:00 EDT, 01:00 EST, 02:00 EST: hourly, in real time.
			want: []string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"},
		},
		{
			name: "berlin daily 02:30 spring forward", spec: "30 2 * * *", tz: "Europe/Berlin", from: "2026-03-28T12:00:00Z",
			want: []string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"},
		},
		{
			name: "berlin daily 02:30 fall back fires once", spec: "30 2 * * *", tz: "Europe/Berlin", from: "2026-10-24T12:00:00Z",
			want: []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"},
		},
		{
			name: "berlin seconds spec at 02:30:15 fall back fires once", spec: "15 30 2 * * *", tz: "Europe/Berlin", from: "2026-10-24T12:00:00Z",
			want: []string{"2026-10-25T00:30:15Z", "2026-10-26T01:30:15Z"},
		},
		{
			name: "berlin hourly spring forward", spec: "0 * * * *", tz: "Europe/Berlin", from: "2026-03-28T23:00:00Z",
			want: []string{"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
		},
		{
			name: "berlin hourly fall back", spec: "0 * * * *", tz: "Europe/Berlin", from: "2026-10-24T22:00:00Z",
			want: []string{"2026-10-24T23:00:00Z", "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"},
		},
		{
			name: "berlin every minute of hour 2 spring forward runs once at the jump", spec: "* 2 * * *", tz: "Europe/Berlin", from: "2026-03-28T12:00:00Z",
			want: []string{"2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z", "2026-03-30T00:01:00Z"},
		},
		{
			name: "daily 03:00 on spring forward is not doubled", spec: "0 3 * * *", tz: "America/New_York", from: "2026-03-07T12:00:00Z",
			want: []string{"2026-03-08T07:00:00Z", "2026-03-09T07:00:00Z"},
		},
		{
			name: "@daily is midnight in the zone", spec: "@daily", tz: "Asia/Tokyo", from: "2026-06-01T00:00:00Z",
			want: []string{"2026-06-01T15:00:00Z", "2026-06-02T15:00:00Z"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.spec, tc.tz)
			got := fires(s, utc(tc.from), len(tc.want))
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestNextZones(t *testing.T) {
	from := utc("2026-06-01T00:00:00Z")
	tests := []struct {
		spec, tz string
		want     string
		zone     string
	}{
		{"0 9 * * *", "Asia/Tokyo", "2026-06-02T09:00:00+09:00", "JST"}, // 09:00 JST today is exactly from: strictly after
		{"0 9 * * *", "UTC", "2026-06-01T09:00:00Z", "UTC"},
		{"0 9 * * *", "", "2026-06-01T09:00:00Z", "UTC"},
		{"0 9 * * *", "America/New_York", "2026-06-01T09:00:00-04:00", "EDT"},
		{"*/5 * * * * *", "UTC", "2026-06-01T00:00:05Z", "UTC"},
		{"0 0 1 1 *", "Europe/Berlin", "2027-01-01T00:00:00+01:00", "CET"},
	}
	for _, tc := range tests {
		s := mustParse(t, tc.spec, tc.tz)
		got := s.Next(from)
		if got.Format(time.RFC3339) != tc.want {
			t.Errorf("%q in %q: Next = %s, want %s", tc.spec, tc.tz, got.Format(time.RFC3339), tc.want)
		}
		if name, _ := got.Zone(); name != tc.zone {
			t.Errorf("%q in %q: zone %s, want %s (Next answers in the schedule's zone)", tc.spec, tc.tz, name, tc.zone)
		}
	}
}

func TestNextSeconds(t *testing.T) {
	s := mustParse(t, "*/5 * * * * *", "Europe/Berlin")
	got := fires(s, utc("2026-03-29T00:59:57Z"), 3) // across Berlin's jump at 01:00Z
	want := []string{"2026-03-29T01:00:00Z", "2026-03-29T01:00:05Z", "2026-03-29T01:00:10Z"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
	// Sub-second input still gives whole seconds.
	if n := s.Next(utc("2026-01-01T00:00:00Z").Add(300 * time.Millisecond)); !n.Equal(utc("2026-01-01T00:00:05Z")) {
		t.Errorf("Next = %s", n)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ spec, tz, want string }{
		{"", "", "missing"},
		{"61 * * * *", "", "invalid cron spec"},
		{"* * *", "", "invalid cron spec"},
		{"@every 1h", "", "@every"},
		{"CRON_TZ=UTC 0 * * * *", "", "time_zone"},
		{"0 * * * *", "Mars/Olympus", "unknown time zone"},
		{"0 * * * *", "Local", "depends on the host"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.spec, tc.tz)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q, %q) = %v, want error containing %q", tc.spec, tc.tz, err, tc.want)
		}
	}
}

func TestZeroScheduleNeverFires(t *testing.T) {
	if n := (Schedule{}).Next(utc("2026-01-01T00:00:00Z")); !n.IsZero() {
		t.Errorf("zero Schedule fired at %s", n)
	}
}
