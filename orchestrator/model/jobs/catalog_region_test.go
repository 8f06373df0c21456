package jobs

import "testing"

func TestRegionLabelMustNameARegion(t *testing.T) {
	cat := testCatalog(t)
	for _, bad := range []string{"EU_1", "", "a very long region name that goes past thirty-two"} {
		_, err := cat.Resolve(Submission{Template: "clean", Labels: map[string]string{RegionLabel: bad}})
		expectProblems(t, err, want{"labels.region", "a region is 1 to 32"})
	}
	if _, err := cat.Resolve(Submission{Template: "clean", Labels: map[string]string{RegionLabel: "eu-1"}}); err != nil {
		t.Fatalf("a valid region was refused: %v", err)
	}
}
