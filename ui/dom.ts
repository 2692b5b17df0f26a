// Small helpers every part of the page uses: an element by its id, and text made safe for HTML.

export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** "1 team", "2 teams". */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`
