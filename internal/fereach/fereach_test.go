package fereach

import (
	"context"
	"net"
	"strings"
	"testing"
)

// Check passes when one FE of several answers, names every FE that does
// not when none does, and leaves what is no base URL to the job, which
// refuses it in its own words.
func TestCheckNamesEveryFEThatCannotBeConnectedTo(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downFE := "http://" + down.Addr().String()
	down.Close()
	ctx := context.Background()
	if err := Check(ctx, []string{downFE, "http://" + up.Addr().String()}); err != nil {
		t.Errorf("one FE up: %v", err)
	}
	err = Check(ctx, []string{downFE, downFE + "/"})
	if err == nil || strings.Count(err.Error(), downFE) != 2 {
		t.Errorf("err %v: want both FEs named", err)
	}
	if err := Check(ctx, []string{"fe1:8030"}); err != nil {
		t.Errorf("an address with no scheme is the job's to refuse: %v", err)
	}
}

// An FE given with user:password@ is named without them: copy, which
// leaves such an address to dorisio's refusal, printed the password in
// this line before.
func TestAnFEsPasswordIsNeverShown(t *testing.T) {
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := down.Addr().String()
	down.Close()
	err = Check(context.Background(), []string{"http://loader:Zq9pw@" + addr})
	if err == nil || strings.Contains(err.Error(), "Zq9pw") || strings.Contains(err.Error(), "loader") ||
		!strings.Contains(err.Error(), "(http://"+addr+" (user and password not shown): connect: connection refused)") {
		t.Errorf("err %v: want the FE named without its user and password", err)
	}
}
