package lifecycle

import (
	"context"
	"maps"
	"strings"
	"testing"
)

func TestOTelEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_SDK_DISABLED": "false"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		if got := OTelEnabled(envOf(c.env)); got != c.want {
			t.Errorf("OTelEnabled(%v) = %v, want %v", c.env, got, c.want)
		}
		s, err := NewOTel(context.Background(), OTelConfig{Getenv: envOf(c.env)})
		if err != nil {
			t.Fatalf("NewOTel(%v): %v", c.env, err)
		}
		if _, nop := s.(Nop); nop == c.want {
			t.Errorf("NewOTel(%v) returned %T", c.env, s)
		}
		s.Close(context.Background())
	}
	if OTelEnabled(nil) {
		t.Error("nil Getenv enables tracing")
	}
}

func TestReadOTelSettingsEndpoints(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318"}, "http://h:4318/v1/traces"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318/"}, "http://h:4318/v1/traces"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h/api/otlp"}, "https://h/api/otlp/v1/traces"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h:4318"}, "http://h:4318/"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h/x/y", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other"}, "http://h/x/y"},
	} {
		s, err := readOTelSettings(envOf(c.env))
		if err != nil || s.endpoint != c.want {
			t.Errorf("%v: endpoint %q (%v), want %q", c.env, s.endpoint, err, c.want)
		}
		if s.serviceName != "tiny-go" {
			t.Errorf("default service name %q", s.serviceName)
		}
	}
	s, _ := readOTelSettings(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_SERVICE_NAME": " svc "}))
	if s.serviceName != "svc" {
		t.Errorf("service name %q", s.serviceName)
	}
}

func TestOTelBadConfigNeverEchoesValues(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://user:SECRET@h"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_HEADERS": "Authorization SECRET"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=%zzSECRET"},
	} {
		s, err := NewOTel(context.Background(), OTelConfig{Getenv: envOf(env)})
		if err == nil {
			t.Errorf("%v: no error", env)
			continue
		}
		if _, nop := s.(Nop); !nop {
			t.Errorf("%v: got %T, want Nop", env, s)
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "localhost") {
			t.Errorf("error echoes the value: %v", err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	for in, want := range map[string]map[string]string{
		"":                           {},
		"a=b":                        {"a": "b"},
		" a = b , c=d%20e,,":         {"a": "b", "c": "d e"},
		"Authorization=Basic%20x%3D": {"Authorization": "Basic x="},
		"k=v=w":                      {"k": "v=w"},
		"k=":                         {"k": ""},
	} {
		got, err := parseHeaders(in)
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("parseHeaders(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"novalue", "=v", "a b=c", "a=%zz", "a=x%0Ay"} {
		if _, err := parseHeaders(in); err == nil {
			t.Errorf("parseHeaders(%q) accepted", in)
		}
	}
}

func TestBoundedErrorType(t *testing.T) {
	for _, c := range []struct {
		in   string
		o    Outcome
		want string
	}{
		{"model_error", Failed, "model_error"},
		{"", Failed, "_OTHER"},
		{"", EffectUnknown, "effect_unknown"},
		{"Error: boom", Failed, "_OTHER"},
		{strings.Repeat("a", 65), Failed, "_OTHER"},
		{"connection_failed", Failed, "connection_failed"},
	} {
		if got := boundedErrorType(c.in, c.o); got != c.want {
			t.Errorf("boundedErrorType(%q, %s) = %q, want %q", c.in, c.o, got, c.want)
		}
	}
}
