package config_test

import (
	"fmt"

	"github.com/ballastdev/ballast/internal/config"
)

// Parse reports every problem of a file at once, one per line, as
// `ballast validate-config` prints them.
func ExampleParse() {
	_, err := config.Parse([]byte(`namespace: ballast
redis:
  adress: 127.0.0.1:6379
  pasword: secret
`), "ballast.yaml")
	fmt.Println(err)
	// Output:
	// ballast.yaml:3:3: redis.adress: unknown field "adress" (known here: addr, addrs, db, dial_timeout, master_name, mode, password, password_env, password_file, recover_on_loss, sentinel_password, sentinel_password_env, sentinel_password_file, sentinel_username, tls, username, wait_replicas, wait_timeout)
	// ballast.yaml:4:3: redis.pasword: unknown field "pasword"; did you mean "password"?
}

// Validation runs once the file decodes; its problems carry positions too.
func ExampleParse_validation() {
	_, err := config.Parse([]byte(`pools:
  spot:
    kind: spot
    billing: per_fortnight
watermarks: {high: 0.3, low: 0.5}
`), "ballast.yaml")
	fmt.Println(err)
	// Output:
	// ballast.yaml:4:14: pools.spot.billing: unknown billing "per_fortnight" (use per_second, per_minute or per_hour)
	// ballast.yaml:5:30: watermarks.low: 0.5 is not below watermarks.high (0.3); the gap between them is what keeps pools from flapping
}

func ExampleDev() {
	cfg := config.Dev()
	cat, _ := cfg.Catalog()
	fmt.Println(cfg.Pools["fixed"].Slots, cat.Names(), len(cfg.Pipelines["features"].Steps))
	// Output:
	// 4 [hello nightly-features sleep steps train-toy] 2
}
