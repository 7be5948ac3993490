package auth

import (
	"fmt"
	"strings"
)

// Role is what a Credential may do. The API checks it per route (the api
// package's grants), the dashboard per page: every page is a read, every
// action (a POST but login, logout and display preferences) an operation.
//
//	role        reads  complete/fail  operations        flow limits
//	admin       yes    yes            yes               yes
//	operator    yes    yes            yes               no
//	read-only   yes    no             no                no
//	completion  no     yes            no                no
//
// Operations are every change to tasks and schedules (create, cancel,
// reschedule, requeue, pause); flow limits are PUT and DELETE
// /v1/limits/{origin}. A completion credential completes or fails a
// delivery only with that delivery's completion credential (X-Completion-
// Token), which it cannot make: see the completion package.
type Role string

// The roles.
const (
	RoleAdmin      Role = "admin"
	RoleOperator   Role = "operator"
	RoleReadOnly   Role = "read-only"
	RoleCompletion Role = "completion"
)

// Grant is what a request needs of its credential's Role.
type Grant int

// The grants, one per column of Role's table.
const (
	GrantRead     Grant = iota // look, change nothing
	GrantComplete              // complete or fail one delivery
	GrantOperate               // change tasks and schedules
	GrantAdmin                 // change flow limits
)

// Can reports whether r has grant g.
func (r Role) Can(g Grant) bool {
	switch r {
	case RoleAdmin:
		return true
	case RoleOperator:
		return g != GrantAdmin
	case RoleReadOnly:
		return g == GrantRead
	case RoleCompletion:
		return g == GrantComplete
	}
	return false
}

// ParseRole reads a role as written in a tokens file.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAdmin, RoleOperator, RoleReadOnly, RoleCompletion:
		return r, nil
	}
	return "", fmt.Errorf("%w: role %q (want admin, operator, read-only or completion)", ErrCredentials, s)
}

// MaxNameLen caps a Credential's name (it is in every session cookie and
// audit line).
const MaxNameLen = 64

// MinTokenLen is the shortest token a Credential may have: 16 bytes is 96
// bits of base64, past guessing at any request rate.
const MinTokenLen = 16

// Credential is a named bearer token and its Role.
type Credential struct {
	Name  string // 1..MaxNameLen of [A-Za-z0-9._-]; in audit lines
	Role  Role
	Token string // not empty; a tokens file's have MinTokenLen bytes or more
}

func (c Credential) check() error {
	switch {
	case c.Name == "" || len(c.Name) > MaxNameLen || strings.Trim(c.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "":
		return fmt.Errorf("%w: name %q (want 1..%d of letters, digits, '.', '_', '-')", ErrCredentials, c.Name, MaxNameLen)
	case c.Token == "":
		return fmt.Errorf("%w: %q has no token", ErrCredentials, c.Name)
	}
	_, err := ParseRole(string(c.Role))
	return err
}
