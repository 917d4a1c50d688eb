package models

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// What a database error means. Postgres names its failures with SQLSTATE
// codes (https://www.postgresql.org/docs/current/errcodes-appendix.html);
// the few the application acts on are named here, and every other package
// asks these predicates instead of reading pgconn's codes itself.
const (
	sqlUniqueViolation     = "23505"
	sqlForeignKeyViolation = "23503"
	sqlCheckViolation      = "23514"
	sqlExclusionViolation  = "23P01"
	sqlDeadlockDetected    = "40P01"
	sqlSerializationFailed = "40001"
	sqlBadByteSequence     = "22021" // character_not_in_repertoire: invalid UTF-8
	sqlUntranslatable      = "22P05" // untranslatable_character (\u0000 in jsonb)
)

// IsInvalidText tells whether Postgres refused text a client sent: bytes
// that are not UTF-8, or a character text cannot hold. The API checks its
// inputs first; this is the backstop that answers 400, not a server fault.
func IsInvalidText(err error) bool {
	code, _ := pgCode(err)
	return code == sqlBadByteSequence || code == sqlUntranslatable
}

// pgCode is err's SQLSTATE, or "" when err is not an error Postgres sent.
func pgCode(err error) (string, *pgconn.PgError) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe
	}
	return "", nil
}

// IsUniqueViolation tells whether err is a unique violation of the named
// constraint, or of any unique constraint when constraint is "".
func IsUniqueViolation(err error, constraint string) bool {
	code, pe := pgCode(err)
	return code == sqlUniqueViolation && (constraint == "" || pe.ConstraintName == constraint)
}

// IsExclusionViolation tells whether err is a violation of the named
// exclusion constraint (pages_live_path_excl: two live pages at one path).
func IsExclusionViolation(err error, constraint string) bool {
	code, pe := pgCode(err)
	return code == sqlExclusionViolation && pe.ConstraintName == constraint
}

// IsCheckViolation tells whether err is a violation of the named check
// (or a trigger raising check_violation under that name:
// memberships_last_admin).
func IsCheckViolation(err error, constraint string) bool {
	code, pe := pgCode(err)
	return code == sqlCheckViolation && pe.ConstraintName == constraint
}

// BrokenRule returns Postgres's message when err is a broken integrity
// constraint (a duplicate, a missing referenced row, a failed check, two
// live pages at one path: pages_live_path_excl): the
// data cannot go in as it is, so retrying cannot help, and the message
// says which rule it broke.
func BrokenRule(err error) (string, bool) {
	switch code, pe := pgCode(err); code {
	case sqlUniqueViolation, sqlForeignKeyViolation, sqlCheckViolation, sqlExclusionViolation:
		return pe.Message, true
	}
	return "", false
}

// IsRetryableConflict tells whether Postgres aborted the transaction for a
// deadlock or a serialization failure: two transactions raced, and the one
// aborted can simply run again.
func IsRetryableConflict(err error) bool {
	code, _ := pgCode(err)
	return code == sqlDeadlockDetected || code == sqlSerializationFailed
}

// IsUnavailable tells whether err means the database could not be reached
// or went away mid-request: the server is down or restarting, refused or
// cut the connection. Nothing is wrong with the request, and it may well
// succeed shortly, so the API answers 503 with Retry-After rather than 500
// (e2e/replicas TestPostgresRestartUnderLoad).
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	if code, _ := pgCode(err); code != "" {
		// Class 08: connection exception; 57P01-03: the server is shutting
		// down, crashed, or is not accepting connections yet.
		return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
	}
	var ne *net.OpError
	return errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		pgconn.SafeToRetry(err)
}
