package lifecycle

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// otelSettings is the tracing configuration read from OTEL_* variables.
type otelSettings struct {
	endpoint    string            // full traces URL
	headers     map[string]string // never logged or exported
	serviceName string
	gzip        bool
}

const defaultServiceName = "tiny-go"

// OTelEnabled reports whether the environment asks for tracing: an OTLP
// endpoint is set and neither OTEL_SDK_DISABLED=true nor
// OTEL_TRACES_EXPORTER=none turns it off.
func OTelEnabled(getenv func(string) string) bool {
	if getenv == nil {
		return false
	}
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(env("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// readOTelSettings reads the settings of an enabled environment. Errors
// name the variable but never echo its value, which may hold credentials.
func readOTelSettings(getenv func(string) string) (otelSettings, error) {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	var s otelSettings
	var err error
	if v := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		// A per-signal URL is used as is (an empty path becomes "/").
		s.endpoint, err = tracesURL(v, "")
		if err != nil {
			return s, fmt.Errorf("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: %w", err)
		}
	} else {
		// The generic endpoint is a base URL for every signal.
		s.endpoint, err = tracesURL(env("OTEL_EXPORTER_OTLP_ENDPOINT"), "/v1/traces")
		if err != nil {
			return s, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
		}
	}
	key := "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	if env(key) == "" {
		key = "OTEL_EXPORTER_OTLP_HEADERS"
	}
	if s.headers, err = parseHeaders(getenv(key)); err != nil {
		return s, fmt.Errorf("%s: %w", key, err)
	}
	comp := env("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION")
	if comp == "" {
		comp = env("OTEL_EXPORTER_OTLP_COMPRESSION")
	}
	s.gzip = strings.EqualFold(comp, "gzip")
	s.serviceName = env("OTEL_SERVICE_NAME")
	if s.serviceName == "" {
		s.serviceName = defaultServiceName
	}
	return s, nil
}

// tracesURL validates raw as an http(s) URL and joins suffix to its path.
func tracesURL(raw, suffix string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("not an http(s) URL")
	}
	switch {
	case suffix != "":
		u.Path = path.Join("/", u.Path, suffix)
		u.RawPath = ""
	case u.Path == "":
		u.Path = "/"
	}
	return u.String(), nil
}

// parseHeaders parses the OTLP headers format "k1=v1,k2=v2" where values
// are percent-encoded. Empty entries are skipped.
func parseHeaders(s string) (map[string]string, error) {
	h := map[string]string{}
	for i, entry := range strings.Split(s, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, ok := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !ok || !validHeaderName(k) {
			return nil, fmt.Errorf("entry %d is not key=value", i+1)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil || strings.ContainsAny(val, "\r\n\x00") {
			return nil, fmt.Errorf("entry %d has an invalid value", i+1)
		}
		h[k] = val
	}
	return h, nil
}

// validHeaderName reports whether k is an RFC 9110 token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
