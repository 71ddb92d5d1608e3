// Package archdoc holds the tests that keep the docs true: the "Imports"
// list of docs/architecture.md must name, for every package of the module,
// exactly the packages of the module it imports; no non-test file is over
// 600 lines and no function over 80; the README points to a CHANGELOG.md
// written in a user's words.
package archdoc
