// auditnote reads and writes auditors' attestations with Go's reference implementation of signed
// notes (https://c2sp.org/signed-note), golang.org/x/mod/sumdb/note: the key file an auditor keeps
// (note.NewSigner), its verifier key (note.NewVerifier), and the signed note itself (note.Sign,
// note.Open). It shares no code with the service's TypeScript; errors go to stderr with exit 1.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run ./tests/go/auditnote keygen -name NAME
//	    prints {"skey", "vkey"}: a new key made by note.GenerateKey
//	... auditnote sign -key FILE -body FILE
//	    signs the body with the private key the file holds, read verbatim by note.NewSigner, and prints
//	    {"name", "hash", "note"}: the signer's key name and hash, and the signed note
//	... auditnote open -vkey VKEY -note FILE
//	    opens the signed note with note.Open, trusting only that verifier key (note.NewVerifier), and
//	    prints {"name", "hash", "text", "signers"}: the verifier's key name and hash, the note's text and
//	    the names of the signatures that verified
package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"golang.org/x/mod/sumdb/note"
)

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func printJSON(v any) {
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		fail(err)
	}
}

func readFile(name string) []byte {
	data, err := os.ReadFile(name)
	if err != nil {
		fail(err)
	}
	return data
}

func keygen(args []string) {
	flags := flag.NewFlagSet("keygen", flag.ExitOnError)
	name := flags.String("name", "", "the key's name")
	flags.Parse(args)
	skey, vkey, err := note.GenerateKey(rand.Reader, *name)
	if err != nil {
		fail(err)
	}
	printJSON(map[string]string{"skey": skey, "vkey": vkey})
}

func sign(args []string) {
	flags := flag.NewFlagSet("sign", flag.ExitOnError)
	keyFile := flags.String("key", "", "the private key's file (PRIVATE+KEY+<name>+<hash>+<key>)")
	bodyFile := flags.String("body", "", "the note's text")
	flags.Parse(args)
	signer, err := note.NewSigner(string(readFile(*keyFile)))
	if err != nil {
		fail(fmt.Errorf("note.NewSigner: %w", err))
	}
	signed, err := note.Sign(&note.Note{Text: string(readFile(*bodyFile))}, signer)
	if err != nil {
		fail(fmt.Errorf("note.Sign: %w", err))
	}
	printJSON(map[string]any{"name": signer.Name(), "hash": fmt.Sprintf("%08x", signer.KeyHash()), "note": string(signed)})
}

func open(args []string) {
	flags := flag.NewFlagSet("open", flag.ExitOnError)
	vkey := flags.String("vkey", "", "the verifier key trusted")
	noteFile := flags.String("note", "", "the signed note")
	flags.Parse(args)
	verifier, err := note.NewVerifier(*vkey)
	if err != nil {
		fail(fmt.Errorf("note.NewVerifier: %w", err))
	}
	n, err := note.Open(readFile(*noteFile), note.VerifierList(verifier))
	if err != nil {
		fail(fmt.Errorf("note.Open: %w", err))
	}
	signers := []string{}
	for _, sig := range n.Sigs {
		signers = append(signers, sig.Name)
	}
	printJSON(map[string]any{"name": verifier.Name(), "hash": fmt.Sprintf("%08x", verifier.KeyHash()), "text": n.Text, "signers": signers})
}

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: auditnote keygen|sign|open [flags]"))
	}
	switch os.Args[1] {
	case "keygen":
		keygen(os.Args[2:])
	case "sign":
		sign(os.Args[2:])
	case "open":
		open(os.Args[2:])
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}
