// Package syncbuf is a byte buffer that several goroutines may write and
// read at once: the log writer tests hand to proxies, services and
// sandboxes that log from their own goroutines while the test reads what
// was logged so far, and the local sandbox's capture of its init's stderr
// (bounded by Buffer.Max). It owns no other state and never fails.
package syncbuf
