package storespec

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Schemes are the store URL schemes a store may have.
var Schemes = []string{"s3", "gs", "azblob", "file"}

// Validate checks a store URL without opening it: a known scheme, and a
// bucket (or an absolute path for file://).
func Validate(rawURL string) error {
	_, _, err := Parse(rawURL)
	return err
}

// Parse splits rawURL into the URL a driver opens and the key prefix taken
// from its path (file:// keeps its path: it is the directory).
func Parse(rawURL string) (*url.URL, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint store URL: %w", err)
	}
	if !slices.Contains(Schemes, u.Scheme) {
		return nil, "", fmt.Errorf("checkpoint store URL %q: scheme %q is not one of s3://, gs://, azblob://, file://", Redact(u), u.Scheme)
	}
	if u.Scheme == "file" {
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return nil, "", fmt.Errorf("checkpoint store URL %q: a file store is file:///absolute/path (three slashes)", Redact(u))
		}
		// The driver writes a temporary file and renames it into place;
		// by default in the machine's temporary directory, whose rename
		// into a store on another filesystem (a shared mount, the usual
		// place for one) fails. Beside the object the rename stays on
		// one filesystem, and a crash's leftover is an object the
		// collector deletes after the grace.
		out := *u
		q := out.Query()
		if q.Get("no_tmp_dir") == "" {
			q.Set("no_tmp_dir", "true")
		}
		out.RawQuery = q.Encode()
		return &out, "", nil
	}
	if u.Host == "" {
		return nil, "", fmt.Errorf("checkpoint store URL %q: no bucket (write %s://BUCKET/prefix)", Redact(u), u.Scheme)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	out := *u
	out.Path, out.RawPath = "", ""
	if u.Scheme == "s3" {
		q := out.Query()
		if q.Get("endpoint") != "" && q.Get("use_path_style") == "" && q.Get("s3ForcePathStyle") == "" {
			q.Set("use_path_style", "true")
		}
		out.RawQuery = q.Encode()
	}
	return &out, prefix, nil
}

// Redact drops user information from a URL before it reaches an error.
func Redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
