package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/oauth2"

	"github.com/tiny-agent/tiny-go/internal/atomicfile"
)

// Store keeps the tokens of MCP servers, one 0600 file per server URL in a
// 0700 directory of the user's config directory. Tokens live nowhere else:
// never in a session, a log or an event.
type Store struct {
	Dir string
}

// StoreDir is the store under a config directory
// ($XDG_CONFIG_HOME/tiny-go or ~/.config/tiny-go).
func StoreDir(configDir string) string {
	return filepath.Join(configDir, "mcp-oauth")
}

// Record is what is kept for one server: the client it signed in as (a
// dynamically registered one included) and the token, so that a later
// run refreshes without signing in again.
type Record struct {
	Server       string           `json:"server"`
	ClientID     string           `json:"clientId"`
	ClientSecret string           `json:"clientSecret,omitzero"`
	AuthURL      string           `json:"authUrl,omitzero"`
	TokenURL     string           `json:"tokenUrl"`
	AuthStyle    oauth2.AuthStyle `json:"authStyle,omitzero"`
	Scopes       []string         `json:"scopes,omitzero"`
	AccessToken  string           `json:"accessToken"`
	TokenType    string           `json:"tokenType,omitzero"`
	RefreshToken string           `json:"refreshToken,omitzero"`
	Expiry       time.Time        `json:"expiry,omitzero"`
}

func (r *Record) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: r.AccessToken, TokenType: r.TokenType, RefreshToken: r.RefreshToken, Expiry: r.Expiry}
}

func (r *Record) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     r.ClientID,
		ClientSecret: r.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: r.AuthStyle},
		Scopes:       r.Scopes,
	}
}

// Path is the file of server's record.
func (s *Store) Path(server string) string {
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:12])+".json")
}

// Load returns the record of server, or nil when there is none.
func (s *Store) Load(server string) (*Record, error) {
	data, err := os.ReadFile(s.Path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w (sign in again to replace it)", s.Path(server), err)
	}
	if r.Server != server {
		return nil, nil
	}
	return &r, nil
}

// Save writes r atomically, readable by the user only.
func (s *Store) Save(r *Record) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(s.Path(r.Server), data, atomicfile.Options{Perm: 0o600})
}

// Delete removes server's record; found is false when there was none.
func (s *Store) Delete(server string) (found bool, err error) {
	err = os.Remove(s.Path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
