package config

import "github.com/ballastdev/ballast/orchestrator/model/jobs"

// Catalog builds the template catalog jobs are resolved against, with raw
// commands allowed only if the config says so. The error is the catalog's
// *jobs.ValidationError, its fields under "templates.NAME".
func (c Config) Catalog() (*jobs.Catalog, error) {
	cat, err := jobs.NewCatalog(c.Templates)
	if err != nil {
		return nil, err
	}
	cat.AllowRaw = c.AllowRawCommands
	return cat, nil
}
