package pipeline

import (
	"strings"
	"testing"
	"time"
)

func TestDeadlineFor(t *testing.T) {
	tests := []struct {
		name, deadline, tz, scheduled, want string
	}{
		{"clock time same morning", "06:00", "Europe/Berlin", "2026-06-01T00:30:00Z", "2026-06-01T04:00:00Z"}, // 02:30 CEST -> 06:00 CEST
		{"clock time across midnight", "06:00", "Europe/Berlin", "2026-06-01T21:00:00Z", "2026-06-02T04:00:00Z"},
		{"clock time equal to the schedule is the next day", "06:00", "UTC", "2026-06-01T06:00:00Z", "2026-06-02T06:00:00Z"},
		{"clock time in tokyo", "06:00", "Asia/Tokyo", "2026-06-01T14:00:00Z", "2026-06-01T21:00:00Z"}, // 23:00 JST -> 06:00 JST
		{"clock time on spring-forward day", "06:00", "America/New_York", "2026-03-08T07:00:00Z", "2026-03-08T10:00:00Z"},
		{"clock time on fall-back day", "06:00", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-01T11:00:00Z"},
		{"duration", "3h", "UTC", "2026-06-01T02:00:00Z", "2026-06-01T05:00:00Z"},
		{"duration across midnight", "3h", "Europe/Berlin", "2026-06-01T21:00:00Z", "2026-06-02T00:00:00Z"},
		{"duration is real time across DST", "3h", "America/New_York", "2026-03-08T05:30:00Z", "2026-03-08T08:30:00Z"},
		{"no deadline", "", "UTC", "2026-06-01T02:00:00Z", ""},
	}
	for _, tc := range tests {
		got, err := DeadlineFor(Pipeline{Deadline: tc.deadline, TimeZone: tc.tz}, utc(tc.scheduled))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.want == "" {
			if !got.IsZero() {
				t.Errorf("%s: got %s, want none", tc.name, got)
			}
			continue
		}
		if !got.Equal(utc(tc.want)) {
			t.Errorf("%s: got %s (%s), want %s", tc.name, got.UTC().Format(time.RFC3339), got, tc.want)
		}
	}
}

func TestDeadlineForErrors(t *testing.T) {
	for _, d := range []string{"25:00", "6:00", "06:60", "soon", "-1h", "0s", "9000h"} {
		if _, err := DeadlineFor(Pipeline{Deadline: d}, utc("2026-06-01T02:00:00Z")); err == nil {
			t.Errorf("deadline %q: no error", d)
		}
	}
	_, err := DeadlineFor(Pipeline{Deadline: "06:00", TimeZone: "Mars/Olympus"}, utc("2026-06-01T02:00:00Z"))
	if err == nil || !strings.Contains(err.Error(), "time zone") {
		t.Errorf("bad zone: %v", err)
	}
}
