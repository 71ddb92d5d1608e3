// Package archdoc holds the test that keeps docs/architecture.md true to
// the imports: its "Imports" list must name, for every package of the
// module, exactly the packages of the module it imports.
package archdoc
