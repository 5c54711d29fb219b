import { render } from 'preact';
import { App } from './app';
import './estilo.css';

const raiz = document.getElementById('app');
if (raiz) render(<App />, raiz);
