package runas

import (
	"os/user"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"nobody", "ballast-job", "svc_batch", "1500:1500", "65534"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v, want ok", ok, err)
		}
	}
	for spec, want := range map[string]string{
		"":           "empty",
		"root":       "unprivileged",
		"0":          "root",
		"0:0":        "root",
		"1500:0":     "root",
		"0:1500":     "root",
		"1500:":      "UID:GID",
		"a:b":        "UID:GID",
		"bad user":   "neither",
		"-rf":        "neither",
		"1500:1500:": "UID:GID",
	} {
		err := Check(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%q) = %v, want an error saying %q", spec, err, want)
		}
	}
}

func TestLookup(t *testing.T) {
	if _, err := user.Lookup("nobody"); err != nil {
		t.Skip("this machine has no user nobody")
	}
	u, err := Lookup("nobody")
	if err != nil || u.UID == 0 || u.GID == 0 || len(u.Groups) == 0 || u.Groups[0] != u.GID || u.Name != "nobody" {
		t.Fatalf("Lookup(nobody) = %+v, %v", u, err)
	}
	n, err := Lookup("4242:4343")
	if err != nil || n.UID != 4242 || n.GID != 4343 || len(n.Groups) != 1 || n.Groups[0] != 4343 {
		t.Fatalf("Lookup(4242:4343) = %+v, %v", n, err)
	}
	if _, err := Lookup("no-such-user-ballast"); err == nil || !strings.Contains(err.Error(), `no user "no-such-user-ballast"`) {
		t.Errorf("Lookup of a missing user = %v, want it named", err)
	}
	if _, err := Lookup("root"); err == nil {
		t.Error("Lookup(root) accepted")
	}
}
