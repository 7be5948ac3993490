// Package completion makes and checks the completion credentials of
// timerd's callbacks: what a callback that answered 202 Accepted receives in
// X-Completion-Token, and what POST /v1/tasks/{key}/complete or /fail must
// give back.
//
// durable's completion token, "<partition>.<store token>", names a
// delivery but is no secret: on SQLite and PostgreSQL the store token is a
// counter, so anyone allowed to call /complete could name any delivery. A
// completion credential is that token with the delivery's attempt and a MAC
// over the task key, the attempt and the token under a server key:
//
//	v1:<attempt>:<partition>.<store token>:<MAC>
//
// MAC being base64url (no padding) of the first 16 bytes of HMAC-SHA256
// under the key of
//
//	"timerd completion v1" | len(key) | key | attempt | len(token) | token
//
// (lengths as uvarints, the attempt as a uvarint), so a credential is good
// for one delivery of one task: it cannot be made without the key, nor
// moved to another task, attempt or delivery, and one credential says
// nothing of another's MAC. Nothing in it is read before its MAC is
// checked, and after that only the durable token is used: durable.Queue's
// Complete reads the attempt, policy and postponements from the store.
// A credential that was good but whose delivery has ended (completed
// already, or its completion timeout passed) passes Verify and is refused
// by Complete as stale (409).
//
// Keys rotate (README.md, "Tokens and roles"): Verify tries every key,
// Mint signs with the first. Add the new key second on every process,
// then move it first, then drop the old one once the deliveries it signed
// are over (their completion_timeout, at most durable.MaxDetach).
package completion

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// ErrCredential reports a string that is not a completion credential this
// server's keys made for the task: malformed, another task's, or forged.
var ErrCredential = errors.New("completion: not a completion credential of this task")

// macLen is the MAC's length in bytes: 128 bits, past forging by trial at
// any request rate.
const macLen = 16

const prefix = "v1:"

// Keys signs and verifies completion credentials.
type Keys struct {
	keys [][]byte // keys[0] signs
}

// New returns Keys that sign with keys[0] and verify with every one. It
// panics on an empty list: the server derives a key when none is
// configured (DeriveKey).
func New(keys [][]byte) *Keys {
	if len(keys) == 0 {
		panic("completion.New: no key")
	}
	return &Keys{keys: keys}
}

// DeriveKey is the key of a server without -completion-key-file: an HMAC of
// a fixed label under the admin token, so that every process with the same
// token makes and takes the same credentials. Changing the token then
// voids every credential outstanding.
func DeriveKey(adminToken string) []byte {
	m := hmac.New(sha256.New, []byte(adminToken))
	m.Write([]byte("timerd completion key v1"))
	return m.Sum(nil)
}

func mac(key []byte, taskKey string, attempt uint64, token string) []byte {
	b := []byte("timerd completion v1")
	b = binary.AppendUvarint(b, uint64(len(taskKey)))
	b = append(b, taskKey...)
	b = binary.AppendUvarint(b, attempt)
	b = binary.AppendUvarint(b, uint64(len(token)))
	b = append(b, token...)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return m.Sum(nil)[:macLen]
}

// Mint returns the credential of the delivery of taskKey's attempt whose
// durable completion token is token.
func (k *Keys) Mint(taskKey string, attempt int, token string) string {
	a := uint64(max(attempt, 0))
	return prefix + strconv.FormatUint(a, 10) + ":" + token + ":" +
		base64.RawURLEncoding.EncodeToString(mac(k.keys[0], taskKey, a, token))
}

// Verify checks that credential is one Mint made, with any of the keys,
// for taskKey, and returns its durable completion token; otherwise an
// error wrapping ErrCredential.
func (k *Keys) Verify(taskKey, credential string) (string, error) {
	rest, ok := strings.CutPrefix(credential, prefix)
	if !ok {
		return "", ErrCredential
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return "", ErrCredential
	}
	attempt, err := strconv.ParseUint(parts[0], 10, 64)
	if err != nil || strconv.FormatUint(attempt, 10) != parts[0] {
		return "", ErrCredential
	}
	got, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(got) != macLen {
		return "", ErrCredential
	}
	for _, key := range k.keys {
		if hmac.Equal(got, mac(key, taskKey, attempt, parts[1])) {
			return parts[1], nil
		}
	}
	return "", ErrCredential
}
