package mcp

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// CanonicalEndpoint validates an MCP server URL and returns its canonical
// form: https, or http only for a loopback host; no userinfo, no fragment;
// scheme and host lower-cased and the scheme's default port dropped. The
// path and query are kept as written. Errors never quote the URL, which is
// user input that might hold credentials by mistake.
func CanonicalEndpoint(raw string) (string, error) {
	if strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return "", errors.New(`"url" must not contain spaces or control characters`)
	}
	if strings.Contains(raw, "#") {
		return "", errors.New(`"url" must not have a fragment`)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return "", errors.New(`"url" must be an absolute http(s) URL`)
	}
	if u.User != nil {
		return "", errors.New(`"url" must not contain userinfo; put the token in the variable named by "tokenEnv"`)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", errors.New(`"url" has no host`)
	}
	if strings.Contains(host, "%") {
		return "", errors.New(`"url" must not use an IPv6 zone`)
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", errors.New(`"url" has an invalid port`)
		}
		port = strconv.Itoa(n) // drops leading zeros
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "https":
		if port == "443" {
			port = ""
		}
	case "http":
		if !isLoopback(host) {
			return "", errors.New(`"url" must use https (http is allowed only for loopback hosts)`)
		}
		if port == "80" {
			port = ""
		}
	default:
		return "", errors.New(`"url" must use https (http is allowed only for loopback hosts)`)
	}
	out := *u
	out.Scheme = scheme
	out.Host = joinHostPort(host, port)
	return out.String(), nil
}

// isLoopback accepts localhost and loopback IP literals (127.0.0.0/8, ::1).
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func joinHostPort(host, port string) string {
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}
