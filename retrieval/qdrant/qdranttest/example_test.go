package qdranttest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
	"github.com/qdrant/go-client/qdrant"
)

// The real go-client talks to the fake as to Qdrant. In a test, use
// qdranttest.Start(t), which also stops the server when the test ends.
func ExampleListen() {
	srv, err := qdranttest.Listen("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	cl, err := qdrant.NewClient(&qdrant.Config{Host: srv.Host(), Port: srv.Port(), SkipCompatibilityCheck: true})
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()

	ctx := context.Background()
	err = cl.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: "demo",
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine}),
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = cl.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "demo", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0)},
		{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(0, 1)},
	}})
	if err != nil {
		log.Fatal(err)
	}
	res, err := cl.Query(ctx, &qdrant.QueryPoints{CollectionName: "demo", Query: qdrant.NewQuery(1, 0.2)})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range res {
		fmt.Printf("%d %.3f\n", p.GetId().GetNum(), p.GetScore())
	}
	// Output:
	// 1 0.981
	// 2 0.196
}
