package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/oauth2"
)

// ClientID is the OAuth client the CLI signs in as: the built-in public
// client (no secret, PKCE required), which the first migration creates.
const ClientID = "pressroom"

// OOBRedirectURI shows the code on a page to copy instead of redirecting.
const OOBRedirectURI = "urn:ietf:wg:oauth:2.0:oob"

// Credentials is one API's stored sign-in.
type Credentials struct {
	ClientID     string    `json:"client_id"`
	RefreshToken string    `json:"refresh_token"`
	AccessToken  string    `json:"access_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitempty"`
}

// credentialsFile is the file's shape: sign-ins keyed by API base URL, so
// one user can work with a local stack and a production API.
type credentialsFile struct {
	Servers map[string]Credentials `json:"servers"`
}

// Store keeps sign-ins in a directory (the user's config directory): the
// file holds refresh tokens, so it is written with mode 0600 in a 0700
// directory, replaced atomically, and every read-refresh-write runs under
// an exclusive lock, so two commands started at once do not both spend the
// same refresh token (the server would take the second use for a replay
// and revoke the whole chain).
type Store struct{ Dir string }

func (s Store) path() string { return filepath.Join(s.Dir, "credentials.json") }

// lock takes the store's lock until the returned function is called.
func (s Store) lock() (func(), error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", s.Dir, err)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, "credentials.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the credentials lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the credentials: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func (s Store) read() (credentialsFile, error) {
	f := credentialsFile{Servers: map[string]Credentials{}}
	b, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("read the stored sign-in: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("read the stored sign-in %s: %w (remove it and sign in again)", s.path(), err)
	}
	f.Servers = migrateKeys(f.Servers)
	return f, nil
}

// migrateKeys re-keys sign-ins stored under other spellings of an API's
// URL (before NormalizeAPI: http://localhost:8080 next to
// http://127.0.0.1:8080/) by the normalized one. When two spellings meet,
// the sign-in refreshed last is kept: the other's refresh token is the
// older one, likely spent. The next write stores the new keys.
func migrateKeys(in map[string]Credentials) map[string]Credentials {
	out := make(map[string]Credentials, len(in))
	for k, c := range in {
		key := apiKey(k)
		if old, ok := out[key]; ok && !c.Expiry.After(old.Expiry) {
			continue
		}
		out[key] = c
	}
	return out
}

// write replaces the file: a new file created 0600 (CreateTemp's mode) in
// the same directory, synced, then renamed over the old one, so a crash
// leaves the old or the new sign-in, never half of one.
func (s Store) write(f credentialsFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".credentials-*.tmp")
	if err != nil {
		return fmt.Errorf("store the sign-in: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("store the sign-in: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("store the sign-in: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("store the sign-in: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("store the sign-in: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path()); err != nil {
		return fmt.Errorf("store the sign-in: %w", err)
	}
	return nil
}

// Load returns the sign-in stored for api (any spelling of it: the store
// keys by NormalizeAPI), if any.
func (s Store) Load(api string) (Credentials, bool, error) {
	unlock, err := s.lock()
	if err != nil {
		return Credentials{}, false, err
	}
	defer unlock()
	f, err := s.read()
	c, ok := f.Servers[apiKey(api)]
	return c, ok, err
}

// Save stores c as api's sign-in.
func (s Store) Save(api string, c Credentials) error {
	return s.update(api, func(Credentials, bool) (Credentials, bool, error) { return c, true, nil })
}

// Forget removes api's sign-in.
func (s Store) Forget(api string) error {
	return s.update(api, func(Credentials, bool) (Credentials, bool, error) { return Credentials{}, false, nil })
}

// update runs fn on api's sign-in under the lock and stores what it
// returns (keep false removes the entry). fn's error is returned after the
// store is updated, so a refresh that fails for good can drop the entry.
func (s Store) update(api string, fn func(c Credentials, ok bool) (Credentials, bool, error)) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	f, err := s.read()
	if err != nil {
		return err
	}
	key := apiKey(api)
	old, ok := f.Servers[key]
	c, keep, fnErr := fn(old, ok)
	if keep {
		f.Servers[key] = c
	} else {
		delete(f.Servers, key)
	}
	if keep || ok {
		if err := s.write(f); err != nil {
			return err
		}
	}
	return fnErr
}

// oauthConfig is the CLI's OAuth client for api.
func oauthConfig(api, clientID string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:    clientID,
		RedirectURL: OOBRedirectURI,
		Endpoint: oauth2.Endpoint{
			AuthURL:  api + "/oauth/authorize",
			TokenURL: api + "/oauth/token",
			// A public client: client_id in the body, no Basic header.
			AuthStyle: oauth2.AuthStyleInParams,
		},
	}
}

// accessTokenMargin: a stored access token that expires sooner is refreshed
// first, so it cannot expire in the middle of a command.
const accessTokenMargin = 2 * time.Minute

// Token returns an access token for api from the store: the stored one
// while it is good for a while, otherwise a refreshed one. The server
// rotates refresh tokens on every use, so the new refresh token is stored
// before Token returns; a refresh token the server refuses
// (invalid_grant: expired, revoked, or already spent) is forgotten.
func (s Store) Token(ctx context.Context, api string, hc *http.Client, now func() time.Time) (string, error) {
	var access string
	err := s.update(api, func(c Credentials, ok bool) (Credentials, bool, error) {
		if !ok || c.RefreshToken == "" {
			return c, ok, errNotSignedIn
		}
		if c.AccessToken != "" && c.Expiry.After(now().Add(accessTokenMargin)) {
			access = c.AccessToken
			return c, true, nil
		}
		conf := oauthConfig(api, c.ClientID)
		tok, err := conf.TokenSource(withHTTP(ctx, hc), &oauth2.Token{RefreshToken: c.RefreshToken}).Token()
		if err != nil {
			var re *oauth2.RetrieveError
			if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
				return c, false, fmt.Errorf("the stored sign-in for %s was refused (%s): run `pressroom login` again", api, re.ErrorCode)
			}
			return c, true, fmt.Errorf("refresh the sign-in at %s: %w", api, err)
		}
		access = tok.AccessToken
		next := Credentials{ClientID: c.ClientID, RefreshToken: tok.RefreshToken, AccessToken: tok.AccessToken, Expiry: tok.Expiry}
		if next.RefreshToken == "" { // a server that does not rotate
			next.RefreshToken = c.RefreshToken
		}
		return next, true, nil
	})
	return access, err
}

// credentialsFromToken is what a sign-in stores.
func credentialsFromToken(clientID string, tok *oauth2.Token) Credentials {
	return Credentials{ClientID: clientID, RefreshToken: tok.RefreshToken, AccessToken: tok.AccessToken, Expiry: tok.Expiry}
}
