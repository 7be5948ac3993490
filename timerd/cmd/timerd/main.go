// Command timerd serves the delayed-task API and delivers its callbacks; see
// the module's README.md.
package main

func main() {}
