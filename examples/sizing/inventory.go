package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// product is what B tells of a product.
type product struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	FromCache bool   `json:"-"` // served by the fallback from the local cache
}

// order is a write to B. Its ID makes writing it twice harmless.
type order struct {
	ID      string `json:"id"`
	Product int    `json:"product"`
}

// inventory is service B of part 2, on 127.0.0.1: it serves products and
// stores orders; while down, it drops every connection.
type inventory struct {
	down atomic.Bool
	mux  *http.ServeMux

	mu     sync.Mutex
	orders map[string]order
}

func newInventory() *inventory {
	inv := &inventory{mux: http.NewServeMux(), orders: map[string]order{}}
	inv.mux.HandleFunc("GET /products/{id}", inv.product)
	inv.mux.HandleFunc("POST /orders", inv.order)
	return inv
}

func (inv *inventory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if inv.down.Load() {
		panic(http.ErrAbortHandler) // the connection drops
	}
	inv.mux.ServeHTTP(w, r)
}

func (inv *inventory) product(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	json.NewEncoder(w).Encode(product{ID: id, Name: fmt.Sprintf("product %d", id)})
}

func (inv *inventory) order(w http.ResponseWriter, r *http.Request) {
	var o order
	if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	inv.mu.Lock()
	inv.orders[o.ID] = o
	inv.mu.Unlock()
}

// stored returns how many distinct orders B holds.
func (inv *inventory) stored() int {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return len(inv.orders)
}
