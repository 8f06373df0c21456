package storespec

import (
	"strings"
	"testing"
)

// TestStoreURLs: the URLs of the four kinds of store are accepted and
// turned into what their drivers expect; others get an error that says
// what is wrong, without the URL's user information.
func TestStoreURLs(t *testing.T) {
	for _, c := range []struct{ in, driver, prefix string }{
		{"s3://b/ballast/ck?region=eu-west-1", "s3://b?region=eu-west-1", "ballast/ck/"},
		{"s3://b?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1", "s3://b?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1&use_path_style=true", ""},
		{"gs://b/p", "gs://b", "p/"},
		{"azblob://c/p/q/", "azblob://c", "p/q/"},
		{"file:///var/lib/ck", "file:///var/lib/ck?no_tmp_dir=true", ""},
		{"file:///var/lib/ck?no_tmp_dir=1", "file:///var/lib/ck?no_tmp_dir=1", ""},
	} {
		u, prefix, err := Parse(c.in)
		if err != nil || u.String() != c.driver || prefix != c.prefix {
			t.Errorf("%s: %v %q %v; want %s %q", c.in, u, prefix, err, c.driver, c.prefix)
		}
	}
	for _, c := range []struct{ in, says string }{
		{"http://b/p", "scheme"},
		{"s3:///p", "no bucket"},
		{"file://host/p", "three slashes"},
		{"file:relative", "three slashes"},
		{"s3://key:secret@b/p", ""},
	} {
		err := Validate(c.in)
		if c.says == "" {
			if err != nil {
				t.Errorf("%s: %v", c.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %q", c.in, err, c.says)
		}
	}
	if err := Validate("ftp://key:secret@b/p"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("credentials in the error: %v", err)
	}
}
