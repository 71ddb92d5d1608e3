package oauth

import (
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// idTokenExpiry reads the "exp" claim of a compact JWT without checking
// its signature (the identity provider does that): enough to tell a user
// their token expired before sending it. Zero without an "exp".
func idTokenExpiry(token string) (time.Time, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, errors.New("not a JWT: it has no three dot-separated parts")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, errors.New("not a JWT: its payload is not base64url")
	}
	var claims struct {
		Exp *float64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return time.Time{}, errors.New("not a JWT: its payload is not a JSON object of claims")
	}
	switch {
	case claims.Exp == nil:
		return time.Time{}, nil
	case *claims.Exp < 0 || *claims.Exp > math.MaxInt32*4 || math.IsNaN(*claims.Exp):
		return time.Time{}, errors.New(`not a JWT: its "exp" is not a time`)
	}
	return time.Unix(int64(*claims.Exp), 0), nil
}
