/** Implementation of stagger-http; not API, may change without notice. */
package dev.stagger.http.internal;
