package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/pressroom/pressroom/client"
)

// The team of the signed-in admin's site (docs/auth.md, "Managing the
// team"): pressroom member list|add|role|remove, over /memberships.

// MemberOptions say whom a member command is about and what it sets.
type MemberOptions struct {
	// Member is a membership id or a member's e-mail (role, remove); Email
	// the new member's (add).
	Member, Email, Name, Role, PathPrefix string
}

// maxListedMembers bounds what member list reads (one page).
const maxListedMembers = 100

// MemberList prints the site's members: id, e-mail, role, section, name.
func MemberList(ctx context.Context, o Options) error {
	c, err := connect(ctx, o)
	if err != nil {
		return err
	}
	ms, err := c.members(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tEMAIL\tROLE\tSECTION\tNAME")
	for _, m := range ms {
		section := "(whole site)"
		if p, ok := m.Attributes["path-prefix"].(string); ok && p != "" {
			section = p
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.Attributes["email"], m.Attributes["role"], section, m.Attributes["name"])
	}
	return w.Flush()
}

// MemberAdd adds a member by e-mail with a role (a new user gets a one-time
// password setup link, which is printed).
func MemberAdd(ctx context.Context, o Options, mo MemberOptions) error {
	c, err := connect(ctx, o)
	if err != nil {
		return err
	}
	attrs := map[string]any{"email": mo.Email, "role": mo.Role}
	if mo.Name != "" {
		attrs["name"] = mo.Name
	}
	if mo.PathPrefix != "" {
		attrs["path-prefix"] = mo.PathPrefix
	}
	r, err := c.do(ctx, http.MethodPost, "/memberships", client.Data("memberships", "", attrs))
	if err != nil {
		return err
	}
	if r.Status != http.StatusCreated {
		return statusErr(r, http.MethodPost, "/memberships")
	}
	res, err := r.Resource()
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "added %s as %s (membership %s)\n", mo.Email, mo.Role, res.ID)
	for _, meta := range []map[string]any{r.Doc.Meta, res.Meta} {
		if u, ok := meta["password-setup-url"].(string); ok {
			fmt.Fprintf(o.Stdout, "password setup link (send it to them; it works once, for 72 hours):\n%s\n", u)
		}
	}
	return nil
}

// MemberRole changes a member's role (and section, when given).
func MemberRole(ctx context.Context, o Options, mo MemberOptions) error {
	c, err := connect(ctx, o)
	if err != nil {
		return err
	}
	id, err := c.memberID(ctx, mo.Member)
	if err != nil {
		return err
	}
	attrs := map[string]any{"role": mo.Role}
	if mo.PathPrefix != "" {
		attrs["path-prefix"] = mo.PathPrefix
	}
	path := "/memberships/" + id
	r, err := c.do(ctx, http.MethodPatch, path, client.Data("memberships", id, attrs))
	if err != nil {
		return err
	}
	if r.Status != http.StatusOK {
		return statusErr(r, http.MethodPatch, path)
	}
	fmt.Fprintf(o.Stdout, "%s is now %s\n", mo.Member, mo.Role)
	return nil
}

// MemberRemove removes a member from the site (their tokens for it stop
// working at once).
func MemberRemove(ctx context.Context, o Options, mo MemberOptions) error {
	c, err := connect(ctx, o)
	if err != nil {
		return err
	}
	id, err := c.memberID(ctx, mo.Member)
	if err != nil {
		return err
	}
	path := "/memberships/" + id
	r, err := c.do(ctx, http.MethodDelete, path, nil)
	if err != nil {
		return err
	}
	if r.Status != http.StatusNoContent {
		return statusErr(r, http.MethodDelete, path)
	}
	fmt.Fprintf(o.Stdout, "removed %s\n", mo.Member)
	return nil
}

// members reads the site's memberships (one page of maxListedMembers).
func (c *session) members(ctx context.Context) ([]resource, error) {
	path := fmt.Sprintf("/memberships?page[size]=%d", maxListedMembers)
	r, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, statusErr(r, http.MethodGet, "/memberships")
	}
	var ms []resource
	if err := json.Unmarshal(r.Doc.Data, &ms); err != nil {
		return nil, fmt.Errorf("GET /memberships: %w", err)
	}
	return ms, nil
}

// memberID is the membership id member names: itself, or the id of the
// membership with that e-mail.
func (c *session) memberID(ctx context.Context, member string) (string, error) {
	if !strings.Contains(member, "@") {
		return member, nil
	}
	ms, err := c.members(ctx)
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if e, _ := m.Attributes["email"].(string); strings.EqualFold(e, member) {
			return m.ID, nil
		}
	}
	return "", fmt.Errorf("no member of the site has the e-mail %s", member)
}
