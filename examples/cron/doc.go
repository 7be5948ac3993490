// Package cron shows a robfig/cron schedule run by a timing wheel. It is a
// module of its own so that the wheel keeps no dependency on robfig/cron.
package cron
