// The keygen command: a new note key for a log, named by its origin.

package main

import (
	"crypto/rand"
	"encoding/json"
	"flag"
	"os"

	"golang.org/x/mod/sumdb/note"
)

func keygen(args []string) {
	flags := flag.NewFlagSet("keygen", flag.ExitOnError)
	origin := flags.String("origin", "", "the log's origin")
	flags.Parse(args)
	skey, vkey, err := note.GenerateKey(rand.Reader, *origin)
	if err != nil {
		fail(err)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]string{"skey": skey, "vkey": vkey})
}
