package events

import (
	"encoding/json"
	"reflect"
	"testing"
)

// sameWire fails unless typed and legacy (the map a producer built before
// the typed form existed) encode to the same JSON; maps encode with sorted
// keys, so equal bytes mean equal keys, value types and values.
func sameWire(t *testing.T, typed, legacy map[string]any) {
	t.Helper()
	got, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("typed data encodes as\n%s\nwant (today's wire)\n%s", got, want)
	}
}

// stored decodes an event as the stream holds it.
func stored(t *testing.T, raw string) Event {
	t.Helper()
	var e Event
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatalf("decoding a stored event: %v", err)
	}
	return e
}

// sameValue fails unless got deep-equals want.
func sameValue(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %+v; want %+v", what, got, want)
	}
}
