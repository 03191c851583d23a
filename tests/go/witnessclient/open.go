// The open command: a signed checkpoint opened with note.Open, trusting the log's key and the
// witnesses' cosignature keys, and what verified printed.

package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func openCommand(args []string) {
	flags := flag.NewFlagSet("open", flag.ExitOnError)
	file := flags.String("file", "", "the signed checkpoint")
	logVkey := flags.String("log", "", "the log's note verifier key")
	var witnesses repeated
	flags.Var(&witnesses, "witness", "a witness's cosignature/v1 verifier key")
	flags.Parse(args)
	text, err := os.ReadFile(*file)
	if err != nil {
		fail(err)
	}
	logVerifier, err := note.NewVerifier(*logVkey)
	if err != nil {
		fail(err)
	}
	verifiers := []note.Verifier{logVerifier}
	for _, vkey := range witnesses {
		c, err := newCosigner(vkey)
		if err != nil {
			fail(err)
		}
		verifiers = append(verifiers, c)
	}
	n, err := note.Open(text, note.VerifierList(verifiers...))
	if err != nil {
		fail(err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		fail(errors.New("not a checkpoint"))
	}
	out := map[string]any{"origin": lines[0], "size": lines[1], "root": lines[2], "signers": []string{}, "timestamps": map[string]uint64{}}
	for _, sig := range n.Sigs {
		out["signers"] = append(out["signers"].([]string), sig.Name)
		raw, _ := base64.StdEncoding.DecodeString(sig.Base64)
		if sig.Name != logVerifier.Name() && len(raw) == 4+8+ed25519.SignatureSize {
			out["timestamps"].(map[string]uint64)[sig.Name] = binary.BigEndian.Uint64(raw[4:12])
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
