package sqlitewheel

const childEnv = "SQLITEWHEEL_CHILD"

func runChild() int { return 2 }
