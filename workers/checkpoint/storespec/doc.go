// Package storespec is what a config may say about a checkpoint store,
// without the cloud SDKs that open one: the rules a store URL follows and
// the defaults of a store's tuning.
//
// It is apart from package checkpoint so that reading a config does not
// link the S3, GCS and Azure clients: every package that parses a config
// (the config's own tests and fuzz target among them) would otherwise
// build several hundred packages it never calls.
package storespec
