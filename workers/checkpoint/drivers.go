package checkpoint

// The stores a checkpoint URL may name. Each driver finds credentials the
// way its cloud's SDK does (environment, shared config files, instance or
// workload identity); nothing in a job's spec or environment reaches them.
import (
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/fileblob"  // file://
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/s3blob"    // s3://
)
