package streamload

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// mysqlGreeting is a MySQL protocol v10 handshake packet as Doris' FE sends
// it on its query port (9030) the moment a client connects.
func mysqlGreeting() []byte {
	payload := []byte{0x0a}
	payload = append(payload, "5.7.99\x00"...)       // server version
	payload = append(payload, 7, 0, 0, 0)            // connection id
	payload = append(payload, "abcdefgh\x00"...)     // auth-plugin-data part 1 + filler
	payload = append(payload, 0xff, 0xf7, 33, 2, 0)  // capabilities, charset, status
	payload = append(payload, 0xff, 0x81, 21)        // capabilities (upper), auth data length
	payload = append(payload, make([]byte, 10)...)   // reserved
	payload = append(payload, "ijklmnopqrst\x00"...) // auth-plugin-data part 2
	payload = append(payload, "mysql_native_password\x00"...)
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), 0}, payload...)
}

// tcpServer serves each connection with handle on a raw loopback listener
// closed by t.Cleanup, and returns its host:port.
func tcpServer(t *testing.T, handle func(conn net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				handle(conn)
			}()
		}
	}()
	return ln.Addr().String()
}

// rawListener writes greet to each connection at once, then reads until
// the client goes away.
func rawListener(t *testing.T, greet []byte) string {
	t.Helper()
	return "http://" + tcpServer(t, func(conn net.Conn) {
		conn.Write(greet)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, conn)
	})
}

func TestAnFEAddressOnTheMySQLPortSaysSo(t *testing.T) {
	fe := rawListener(t, mysqlGreeting())
	c, ft := newClient(t, []string{fe}, nil)
	_, err := c.Load(context.Background(), loadReq("mysql_1", true, "1\n"))
	e := mustKind(t, err, nil)
	want := "this looks like Doris' MySQL protocol port; Stream Load uses the FE HTTP port (8030 by default"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Next: point Config.FEs") || e.Kind != nil {
		t.Errorf("error %q: want %q and the next step, with no unknown outcome", err, want)
	}
	if strings.Contains(err.Error(), "malformed HTTP response") || len(ft.slept()) != 0 {
		t.Errorf("error %q after sleeps %v: want Go's text replaced and no retry", err, ft.slept())
	}
	for _, call := range []func() error{
		func() error { _, err := c.LoadState(context.Background(), "db1", "l"); return err },
		func() error { _, err := c.Commit(context.Background(), "db1", 5, "l"); return err },
	} {
		err := call()
		mustKind(t, err, nil)
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "outcome unknown") {
			t.Errorf("error %q", err)
		}
	}
}

func TestAnAddressOfAnotherNonHTTPServiceIsNamed(t *testing.T) {
	fe := rawListener(t, []byte("SSH-2.0-OpenSSH_9.6\r\n"))
	c, _ := newClient(t, []string{fe}, nil)
	_, err := c.Load(context.Background(), loadReq("ssh_1", true, "1\n"))
	mustKind(t, err, nil)
	if !strings.Contains(err.Error(), `answered "SSH-2.0-OpenSSH_9.6" instead of an HTTP status line`) {
		t.Errorf("error %q", err)
	}
}

func TestAnHTTPSAddressOnTheMySQLPortSaysSo(t *testing.T) {
	fe := "https://" + strings.TrimPrefix(rawListener(t, mysqlGreeting()), "http://")
	c, _ := newClient(t, []string{fe}, nil)
	_, err := c.LoadState(context.Background(), "db1", "l")
	mustKind(t, err, nil)
	if !strings.Contains(err.Error(), "this looks like Doris' MySQL protocol port") {
		t.Errorf("error %q", err)
	}
}
