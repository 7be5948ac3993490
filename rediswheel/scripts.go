package rediswheel

import (
	"embed"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts live in lua/, one per operation; each is prefixed with
// lua/keys.lua and, all but add, with the helpers of lua/common.lua. Every
// script takes the six keys of one shard (see shardKeys; add, on a single
// server, those of several: see sendAdds) and reads the clock with TIME, so
// it is atomic, runs on one cluster slot, and does work bounded by its
// arguments.
//
//go:embed lua/*.lua
var luaFiles embed.FS

var (
	addScript     = loadScript("add")
	cancelScript  = loadScript("cancel")
	claimScript   = loadScript("claim")
	settleScript  = loadScript("settle")
	extendScript  = loadScript("extend")
	requeueScript = loadScript("requeue")
	deadScript    = loadScript("dead")
	statsScript   = loadScript("stats")
)

// The inspection scripts (get.go, list.go, reschedule.go, pause.go).
var (
	getScript        = loadScript("get")
	listScript       = loadScript("list")
	rescheduleScript = loadScript("reschedule")
	pauseScript      = loadScript("pause")
)

func loadScript(name string) *redis.Script {
	src := readLua("keys")
	if name != "add" {
		src += "\n" + readLua("common")
	}
	return redis.NewScript(src + "\n" + readLua(name))
}

func readLua(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// shardKeys names the keys of shard i of namespace ns in layout 1
// (layout.go), in the order the scripts expect: due, lease, dead, body,
// ctl, kept. The hash tag {ns.i} puts them in one cluster slot.
func shardKeys(ns string, i int) []string {
	return tagKeys("{" + ns + "." + strconv.Itoa(i) + "}")
}
