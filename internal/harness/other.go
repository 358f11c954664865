package harness

import (
	"path"
	"strings"

	"github.com/failpass/failpass/internal/testrunner"
)

const (
	whyJS          = "the JavaScript test runner reads it (package.json, lock files, jest, vitest, mocha, babel and TypeScript configuration, at the workdir, above it and in the packages below it)"
	whyNodeModules = "the JavaScript test runner loads code from node_modules"
	whyCargo       = "cargo reads it when it builds and runs the tests (Cargo.toml, Cargo.lock, build.rs, .cargo/config, rust-toolchain, tests/common/)"
)

var jsConfigs = []string{
	"package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "pnpm-workspace.yaml",
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pnp.cjs", ".pnp.loader.mjs",
	"jest.config.*", "jest.setup.*", "jest.preset.*", "vitest.config.*", "vitest.workspace.*", "vitest.setup.*", "vite.config.*",
	".mocharc*", "babel.config.*", ".babelrc*", "tsconfig*.json", "jsconfig*.json", ".swcrc",
}

// jsPlan: npm test, jest, vitest and node --test are recognized at the
// level of their configuration: which files the tests are is up to the
// configuration itself.
func jsPlan(c testrunner.Command) *plan {
	pl := &plan{}
	for _, a := range ancestors(c.Workdir) {
		pl.names(a, whyJS, jsConfigs...)
	}
	// Below the workdir too: a workspace's packages carry their own
	// package.json and runner configuration.
	pl.add(c.Workdir, true, func(rel string) string {
		b := path.Base(rel)
		for _, g := range jsConfigs {
			if ok, _ := path.Match(g, b); ok {
				return whyJS
			}
		}
		return ""
	})
	pl.add(".", true, func(rel string) string {
		if segment(rel, "node_modules") {
			return whyNodeModules
		}
		return ""
	})
	if c.Kind == testrunner.NPM || c.Kind == testrunner.Jest {
		// Jest mocks node modules with the files of <rootDir>/__mocks__
		// without being asked, and create-react-app loads setupTests.
		pl.below(path.Join(c.Workdir, "__mocks__"), "jest mocks node modules with the files of __mocks__ beside node_modules")
		pl.names(path.Join(c.Workdir, "src"), whyJS, "setupTests.*")
	}
	return pl
}

func cargoPlan(c testrunner.Command) *plan {
	pl := &plan{}
	for _, a := range ancestors(c.Workdir) {
		pl.names(a, whyCargo, "Cargo.toml", "Cargo.lock", "build.rs", "rust-toolchain", "rust-toolchain.toml")
		pl.names(path.Join(a, ".cargo"), whyCargo, "config", "config.toml")
		pl.below(path.Join(a, "tests", "common"), whyCargo)
	}
	// Every crate below the workdir may be built (a workspace's members).
	pl.add(c.Workdir, true, func(rel string) string {
		if b := path.Base(rel); b == "Cargo.toml" || b == "build.rs" || strings.Contains("/"+rel, "/tests/common/") {
			return whyCargo
		}
		return ""
	})
	return pl
}
