//go:build tools

// Package deps pins the modules failpass's packages are being built on, so
// that parallel work does not race on go.mod. It is removed once every
// module here is imported by real code.
package deps

import (
	_ "github.com/gowebpki/jcs"
	_ "github.com/hiddeco/sshsig"
	_ "github.com/landlock-lsm/go-landlock/landlock"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/rogpeppe/go-internal/lockedfile"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/crypto/ssh"
	_ "golang.org/x/sys/unix"
)
