package ucxmp

// The tests that run collectives through package bench are an external
// package (collectives_test.go): bench imports the team layer, which
// imports this package. They build their transports with the package's
// own test helpers, exported to them here.

var (
	Mesh       = mesh
	MeshWith   = meshWith
	EngineMesh = engineMesh
	RailsMesh  = railsMesh
)
