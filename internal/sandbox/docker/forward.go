package docker

import (
	"fmt"
	"io"
	"net"
	"strconv"
)

// ProxyPort is the in-container loopback port of the proxy forwarder.
const ProxyPort = 3128

// EnvForward switches the fullsend binary into the in-container proxy
// forwarder (package reexec calls Forward with its value): it listens on
// 127.0.0.1:ProxyPort and relays every connection to the host proxy's unix
// socket named by the variable.
const EnvForward = "FULLSEND_SANDBOX_FORWARD"

// Forward is the proxy forwarder process: it prints "listening" once it
// listens, then relays connections to the unix socket sock until it can
// accept no more, and returns the exit status (1: it could not listen or
// accept).
func Forward(sock string) int {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ProxyPort))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("listening")
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("unix", sock)
			if err != nil {
				return
			}
			defer u.Close()
			go func() { io.Copy(u, c); u.(*net.UnixConn).CloseWrite() }()
			io.Copy(c, u)
		}()
	}
}
