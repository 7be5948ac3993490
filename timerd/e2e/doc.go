// Package e2e tests timerd as its users run it: the built binary, as
// processes, against real Redis (standalone and a 3-master cluster), with
// SIGKILL and SIGTERM. It has only tests.
package e2e
