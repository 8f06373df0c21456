package queues_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestDeliveryEncodingIsJSON: the payload written by hand is the bytes
// json.Marshal gives, for every field set or not and IDs that need
// escaping, and reads back as it was; a field added to Delivery fails
// here until Encode writes it.
func TestDeliveryEncodingIsJSON(t *testing.T) {
	if n := reflect.TypeFor[queues.Delivery]().NumField(); n != 5 {
		t.Fatalf("Delivery has %d fields; Encode writes 5: teach it the new ones, then change this count", n)
	}
	for _, id := range []string{"01HZX7ABC", `q"uote`, "<&>", "é", ""} {
		for _, n := range []int{0, 1, 3, -1, 1 << 33} {
			d := queues.Delivery{JobID: id, Attempt: n + 1, Slots: n, Member: n % 2, Members: n * 2}
			want, _ := json.Marshal(d)
			if got := d.Encode(); string(got) != string(want) {
				t.Fatalf("Encode(%+v) = %s, encoding/json writes %s", d, got, want)
			}
			if id == "" || d.Attempt < 1 {
				continue
			}
			back, err := queues.DecodeDelivery(d.Encode())
			if err != nil || back != d {
				t.Fatalf("%+v read back as %+v (%v)", d, back, err)
			}
		}
	}
}
