package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestQoSParsesGroupsAndPlacement(t *testing.T) {
	cfg, err := Parse([]byte(fixedPool+`
qos:
  groups:
    core: {cpus: 6, memory: 48GiB}
    burst:
      cpus: 1.5
      memory: 8GiB
      io:
        - {path: /var/lib/ballast, read_bps: 200MiB, write_iops: 500}
      egress: 50MiB
    tiny: {memory: 64MiB, cpus: 0.5, required: true}
  teams: {ml: tiny}
templates:
  train:
    command: [train]
    class: core
    limits: {memory: 16GiB}
  probe:
    command: [probe]
    qos: tiny
`), "q.yaml")
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.QoS
	if q.Core != "core" || q.Burst != "burst" || q.Loan != "burst" {
		t.Errorf("placement %q %q %q, want core, burst, burst (lending stays in the burst group)", q.Core, q.Burst, q.Loan)
	}
	b := q.Groups["burst"]
	if b.CPUs != 1.5 || b.Memory != 8<<30 || b.Egress != 50<<20 || len(b.IO) != 1 || b.IO[0].ReadBPS != 200<<20 || b.IO[0].WriteIOPS != 500 {
		t.Errorf("burst group %+v", b)
	}
	if !q.Groups["tiny"].Required {
		t.Error("tiny is required")
	}
	// Template's group, then team's, then placement's.
	for _, tc := range []struct {
		spec  jobs.Spec
		fixed bool
		want  string
	}{
		{jobs.Spec{Class: jobs.ClassCore}, true, "core"},
		{jobs.Spec{Class: jobs.ClassBurst}, false, "burst"},
		{jobs.Spec{Class: jobs.ClassBurst}, true, "burst"},
		{jobs.Spec{Class: jobs.ClassCore, Team: "ml"}, true, "tiny"},
		{jobs.Spec{Class: jobs.ClassBurst, Team: "ml", QoS: "core"}, false, "core"},
	} {
		if got := q.Group(tc.spec, tc.fixed); got != tc.want {
			t.Errorf("Group(%+v, fixed %v) = %q, want %q", tc.spec, tc.fixed, got, tc.want)
		}
	}
}

func TestQoSValidationNamesTheField(t *testing.T) {
	cases := []struct {
		name, doc, field, msg string
	}{
		{"cpus in millicores", "qos:\n  groups:\n    g: {cpus: 0.005} # <-\n", "qos.groups.g.cpus", "millicores"},
		{"negative cpus", "qos:\n  groups:\n    g: {cpus: -1} # <-\n", "qos.groups.g.cpus", "out of range"},
		{"memory without a unit", "qos:\n  groups:\n    g: {memory: 512} # <-\n", "qos.groups.g.memory", "with a unit"},
		{"bad size", "qos:\n  groups:\n    g: {memory: lots} # <-\n", "qos.groups.g.memory", "is not a size"},
		{"io without a target", "qos:\n  groups:\n    g:\n      io:\n        - {read_bps: 10MiB} # <-\n", "qos.groups.g.io[0]", "name the device"},
		{"io device and path", "qos:\n  groups:\n    g:\n      io:\n        - {device: /dev/vda, path: /data, read_bps: 10MiB} # <-\n", "qos.groups.g.io[0].path", "not both"},
		{"io bad device", "qos:\n  groups:\n    g:\n      io:\n        - {device: sda, read_bps: 10MiB} # <-\n", "qos.groups.g.io[0].device", "MAJOR:MINOR"},
		{"io relative path", "qos:\n  groups:\n    g:\n      io:\n        - {path: data, read_bps: 10MiB} # <-\n", "qos.groups.g.io[0].path", "not absolute"},
		{"io sets nothing", "qos:\n  groups:\n    g:\n      io:\n        - {path: /data} # <-\n", "qos.groups.g.io[0]", "sets no limit"},
		{"io rate too low", "qos:\n  groups:\n    g:\n      io:\n        - {path: /data, read_bps: 10} # <-\n", "qos.groups.g.io[0].read_bps", "below 4 KiB"},
		{"io negative iops", "qos:\n  groups:\n    g:\n      io:\n        - {path: /data, read_iops: -1} # <-\n", "qos.groups.g.io[0].read_iops", "negative"},
		{"egress too low", "qos:\n  groups:\n    g: {egress: 100} # <-\n", "qos.groups.g.egress", "below 1 KiB"},
		{"bad group name", "qos:\n  groups:\n    Big Group: {cpus: 1} # <-\n", "qos.groups.Big Group", "group name"},
		{"unknown team group", "qos:\n  teams:\n    ml: nope # <-\n", "qos.teams.ml", "not a group"},
		{"unknown loan group", "qos:\n  loan: lent # <-\n", "qos.loan", "not a group"},
		{"unknown template group", "templates:\n  t:\n    command: [x]\n    qos: nope # <-\n", "templates.t.qos", "not a group"},
		{"job looser than group", "qos:\n  groups:\n    core: {memory: 1GiB}\ntemplates:\n  t:\n    command: [x]\n    class: core\n    limits: {memory: 2GiB} # <-\n", "templates.t.limits.memory", "tighter than its group"},
		{"job egress", "templates:\n  t:\n    command: [x]\n    limits: {egress: 1MiB} # <-\n", "templates.t.limits.egress", "per QoS group"},
		{"unknown qos key", "qos:\n  group: {} # <-\n", "qos.group", `did you mean "groups"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := fixedPool + c.doc
			_, err := Parse([]byte(doc), "q.yaml")
			var ps Problems
			if !errors.As(err, &ps) || len(ps) != 1 {
				t.Fatalf("Parse = %v, want one problem", err)
			}
			p := ps[0]
			if p.Field != c.field || !strings.Contains(p.Message, c.msg) {
				t.Errorf("problem %v, want field %s with %q", p, c.field, c.msg)
			}
			if line := wantLine(t, doc); p.Line != line {
				t.Errorf("line %d, want %d (%v)", p.Line, line, p)
			}
		})
	}
}

func TestByteSizeRoundTrip(t *testing.T) {
	for in, want := range map[string]jobs.ByteSize{"64MiB": 64 << 20, "1.5GiB": 3 << 29, "100MB": 100e6, "4096": 4096, "2 GiB": 2 << 30, "8G": 8 << 30} {
		got, err := jobs.ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		b, _ := got.MarshalText()
		back, err := jobs.ParseByteSize(string(b))
		if err != nil || back != got {
			t.Errorf("%q does not read back: %d, %v", b, back, err)
		}
	}
	if s := jobs.ByteSize(512 << 20).String(); s != "512 MiB" {
		t.Errorf("String = %q, want 512 MiB", s)
	}
}
